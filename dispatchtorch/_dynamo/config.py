"""torch._dynamo.config: the settings this compiler reads."""

# signatures captured per compiled function before new ones run eagerly (with a warning)
cache_size_limit = 8
