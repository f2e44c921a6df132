"""The inbox assistant: a fast intent router in front of a query agent and an organize agent.

`runner.chat_run_inbox` is the run mode "inbox"; `conversations` keeps one conversation per
folder going (continued within 30 minutes, otherwise a new one); suggestions and moves are
written by `apps.organize.services`, which posts their messages here.
"""
