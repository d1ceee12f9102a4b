#!/bin/sh
# UserPromptSubmit: whatever a hook prints on stdout (exit 0) is added as context for the model.
cat > /dev/null  # the JSON payload on stdin is not needed here
echo "Project rules: notes go under notes/; never delete anything; end your final answer with a line 'SUMMARY: ...'."
