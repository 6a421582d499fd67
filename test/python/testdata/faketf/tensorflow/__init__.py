"""A stand-in for TensorFlow with only what backfill_report uses, so that
its Keras callback and TerminationConfig are tested where TensorFlow is
not installed. It records what it was given; it trains nothing."""


class _Callback:
    """keras.callbacks.Callback: the model is set before training."""

    def __init__(self):
        self.model = None

    def set_model(self, model):
        self.model = model


class _TerminationConfig:
    def __init__(self, termination_watcher_fn=None, exit_fn=None, grace_period=None):
        self.termination_watcher_fn = termination_watcher_fn
        self.exit_fn = exit_fn
        self.grace_period = grace_period


class _Namespace:
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


keras = _Namespace(callbacks=_Namespace(Callback=_Callback))
distribute = _Namespace(experimental=_Namespace(TerminationConfig=_TerminationConfig))
