"""MultiWorkerMirroredStrategy with tf.distribute.experimental.
PreemptionCheckpointHandler (TensorFlow 2.10+) under backfill.

backfill_report.termination_config() makes the handler save when this pod
gets SIGTERM or the operator's stop notice, report the checkpoint from the
chief right after the save, and exit 143, which restartPolicy ExitCode
restarts. Left to its defaults the handler exits 42, which ExitCode treats
as a permanent failure, and on GCE GPU machines it watches the metadata
server's maintenance events instead of SIGTERM.

The handler saves only when told a stop is coming; a lost node tells
nothing. For periodic checkpoints as well, pass a tf.train.CheckpointManager
instead of the checkpoint and directory (TensorFlow 2.11+; see its
documentation for the non-chief workers' write directories).
"""
import os

import tensorflow as tf

import backfill_report

CKPT_DIR = os.environ.get("CKPT_DIR", "/checkpoints/mwms-run-1")  # storage every replica reaches
STEPS_PER_EPOCH = 200
EPOCHS = 20
REPORT_EVERY = 100

strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input(shape=(32,)), tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.Adam()
checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)

handler = tf.distribute.experimental.PreemptionCheckpointHandler(
    strategy.cluster_resolver,
    checkpoint,
    CKPT_DIR,  # restored from here at start; the chief saves here
    termination_config=backfill_report.termination_config(step=lambda: handler.total_run_calls),
)

x = tf.random.normal((4096, 32))
dataset = tf.data.Dataset.from_tensor_slices((x, tf.reduce_sum(x, axis=1, keepdims=True))).batch(64).repeat()
iterator = iter(strategy.experimental_distribute_dataset(dataset))


@tf.function
def train_step(batch):
    def step_fn(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    return strategy.run(step_fn, args=batch)


chief = backfill_report.is_chief()
# total_run_calls comes back from the checkpoint after a restart.
for epoch in range(handler.total_run_calls // STEPS_PER_EPOCH, EPOCHS):
    for _ in range(handler.total_run_calls % STEPS_PER_EPOCH, STEPS_PER_EPOCH):
        # On SIGTERM or a stop notice, in any worker, every worker saves at
        # the same step inside run(); then exit_fn reports and exits 143.
        handler.run(train_step, next(iterator))
        if chief and handler.total_run_calls % REPORT_EVERY == 0:
            backfill_report.report(handler.total_run_calls, epoch=epoch + 1)
