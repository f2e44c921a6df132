from django.apps import AppConfig


class OrganizeConfig(AppConfig):
    name = "apps.organize"
    label = "organize"
