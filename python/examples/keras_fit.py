"""Keras fit under backfill: BackupAndRestore saves at each epoch's end,
ReportCallback reports progress and, placed after it, each checkpoint.

Run it anywhere: without BACKFILL_REPORT_URL the reports are skipped.
BACKUP_DIR must be storage every replica reaches (a shared volume or a
bucket): a recreated pod has a fresh filesystem.
"""
import os

import tensorflow as tf

import backfill_report

BACKUP_DIR = os.environ.get("BACKUP_DIR", "/checkpoints/keras-run-1")

# TF_CONFIG (set by the operator) makes this a multi-worker job; without
# it, one process.
strategy = tf.distribute.MultiWorkerMirroredStrategy() if "TF_CONFIG" in os.environ else tf.distribute.get_strategy()

x = tf.random.normal((4096, 32))
y = tf.cast(tf.reduce_sum(x, axis=1) > 0, tf.int32)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096).batch(64).repeat()

with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(32,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(2),
    ])
    model.compile(
        optimizer="adam",
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )

model.fit(
    dataset,
    epochs=20,
    steps_per_epoch=200,
    callbacks=[
        # Restores the model, optimizer and epoch after a restart, and
        # saves at the end of every epoch (save_freq="epoch").
        tf.keras.callbacks.BackupAndRestore(backup_dir=BACKUP_DIR),
        # After it in the list: Keras calls callbacks in order, so the
        # epoch's checkpoint is written when this reports it.
        backfill_report.ReportCallback(every_n_steps=100),
    ],
)
