"""The chat: a person's conversation with the team's model, which calls the tools of their servers."""
