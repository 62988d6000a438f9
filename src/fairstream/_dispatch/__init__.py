"""The adaptive dispatcher: a client-side queue and admission policies (see ``_dispatcher``)."""
