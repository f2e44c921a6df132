"""The inbox assistant: a fast intent router in front of a query agent and an organize agent.

`runner.chat_run_inbox` is the run mode "inbox" (registered with chat in `apps.InboxConfig`).
Each folder has one inbox conversation going (`apps.chat.inbox_conversations.inbox_conversation_current`:
continued within 30 minutes, otherwise a new one); suggestions and moves are written by
`apps.organize`, which posts their messages to the same conversation.
"""
