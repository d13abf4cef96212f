"""The conversation: routing a turn to documents, a direct reply or a decline (``router``);
rewriting a follow-up into a standalone question and guarding the rewrite (``rewrite``); keeping the
names and codes a conversation is about (``names``); and where conversations live between requests,
a SQLite file or Redis (``store``). The route and condense steps read from here.
"""
