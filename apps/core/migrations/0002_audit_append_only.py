import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Every role is refused, the table's owner too (short of disabling or dropping the trigger, a
# deliberate schema change), so no ORM call or SQL of the application rewrites history. TRUNCATE
# is left alone: the test database's flush uses it.
APPEND_ONLY = """
CREATE FUNCTION core_auditentry_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'core_auditentry is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER core_auditentry_append_only_trg
    BEFORE UPDATE OR DELETE ON core_auditentry
    FOR EACH ROW EXECUTE FUNCTION core_auditentry_append_only();
"""

APPEND_ONLY_REVERSE = """
DROP TRIGGER IF EXISTS core_auditentry_append_only_trg ON core_auditentry;
DROP FUNCTION IF EXISTS core_auditentry_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # No foreign key: deleting a person would otherwise UPDATE (SET NULL) rows the trigger guards.
        migrations.AlterField(
            model_name="auditentry",
            name="actor",
            field=models.ForeignKey(
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunSQL(APPEND_ONLY, reverse_sql=APPEND_ONLY_REVERSE),
    ]
