from django.db import migrations

import apps.core.crypto


class Migration(migrations.Migration):
    # On the way back the UPDATEs must commit before the ALTERs, or PostgreSQL refuses to alter
    # a table with pending (deferred foreign key) trigger events.
    atomic = False

    dependencies = [
        ("connectors", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="drivecredential",
            name="access_token",
            field=apps.core.crypto.EncryptedTextField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="drivecredential",
            name="refresh_token",
            field=apps.core.crypto.EncryptedTextField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="oauthstate",
            name="code_verifier",
            field=apps.core.crypto.EncryptedTextField(blank=True, null=True),
        ),
        # Going back to NOT NULL needs the empty secrets as empty strings again.
        migrations.RunSQL(
            migrations.RunSQL.noop,
            reverse_sql=[
                "UPDATE connectors_drivecredential SET access_token = '' WHERE access_token IS NULL",
                "UPDATE connectors_drivecredential SET refresh_token = '' WHERE refresh_token IS NULL",
                "UPDATE connectors_oauthstate SET code_verifier = '' WHERE code_verifier IS NULL",
            ],
        ),
    ]
