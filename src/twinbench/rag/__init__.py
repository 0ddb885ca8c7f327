"""RAG evidence evaluation: evidence contracts, retrieval, retrieval metrics (DESIGN.md).

Records and validation (`records`, `validate`), TREC interchange (`trec`), retrievers
(`retrievers/`), fusion, metrics; the CLI group is `twinbench rag`.
"""
