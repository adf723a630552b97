"""purr inside LLM app frameworks: a LangChain runnable (``serve.integrations.langchain``,
``pip install 'purr-edit[langchain]'``) and a LlamaIndex query-engine wrapper
(``serve.integrations.llamaindex``, ``pip install 'purr-edit[llamaindex]'``), both checking an
answer against the app's own retrieved documents (``serve.integrations.common``)."""
