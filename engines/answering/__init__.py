"""Answering: what a question asks for (``asks``) and the ranges a clause states (``ranges``);
quoting the clauses that answer (``extract``) or a grounded prompt and the stream filter over an
LLM's answer (``generate``); and refusing plainly when nothing relevant was retrieved (``refusal``,
with its threshold measured per corpus in ``gate_calibration``) or the retrieved text does not
answer (``answerability``). The gate, answer and check steps read from here.
"""
