"""A custom training loop under backfill: restore, checkpoint every
SAVE_EVERY steps and report each checkpoint; on SIGTERM (preemption,
eviction) or the operator's stop notice (suspend, clean-up), save, report
and exit 143.

Run it anywhere: without BACKFILL_REPORT_URL the reports are skipped.
CKPT_DIR must be storage every replica reaches.
"""
import os
import sys

import tensorflow as tf

import backfill_report

CKPT_DIR = os.environ.get("CKPT_DIR", "/checkpoints/run-1")
SAVE_EVERY = 500  # steps; `kubectl backfill describe JOB` suggests an interval once the job was disrupted
REPORT_EVERY = 100
TOTAL_STEPS = 20000

backfill_report.watch_sigterm()  # SIGTERM sets a flag stopping() reads, instead of killing at once

model = tf.keras.Sequential([tf.keras.Input(shape=(32,)), tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
step = tf.Variable(0, dtype=tf.int64)
ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step)
manager = tf.train.CheckpointManager(ckpt, CKPT_DIR, max_to_keep=3)
ckpt.restore(manager.latest_checkpoint)  # resume after a restart; nothing to restore the first time


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


def save_and_report():
    manager.save(checkpoint_number=step)
    backfill_report.report(int(step), checkpoint=True)  # durable now: say so


while int(step) < TOTAL_STEPS:
    x = tf.random.normal((64, 32))
    train_step(x, tf.reduce_sum(x, axis=1, keepdims=True))
    step.assign_add(1)
    n = int(step)
    if n % SAVE_EVERY == 0:
        save_and_report()
    elif n % REPORT_EVERY == 0:
        backfill_report.report(n)
    if backfill_report.stopping():
        # Stop notice: the operator stops the pod as soon as this report
        # arrives, instead of at the notice's end. SIGTERM: the grace
        # period (60 s by default) runs; save well within it.
        save_and_report()
        sys.exit(backfill_report.EXIT_RESTARTABLE)

save_and_report()
