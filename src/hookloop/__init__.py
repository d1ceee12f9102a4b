"""hookloop: an LLM agent runtime whose loop you extend without writing into it."""
