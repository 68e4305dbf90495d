"""The chat: the team's model in the loop (contract §8): providers, the turn loop, conversations, app context."""
