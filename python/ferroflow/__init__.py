"""ferroflow from Python: `ferroflow.Server` runs one task of a TensorFlow cluster as a
`ferroflow server` child process, with `tf.distribute.Server`'s signature and behaviour, so a
TensorFlow 1.x trainer switches by changing one line:

    server = ferroflow.Server(cluster, job_name="worker", task_index=0)   # was tf.distribute.Server
    with tf.compat.v1.Session(server.target) as sess: ...

The package does not need TensorFlow. Where TensorFlow is importable, errors are raised as
its exception types (`tf.errors.UnknownError` for a port in use, ...) and `server_def` is its
`ServerDef`; otherwise errors are `ferroflow.ServerError` and `server_def` is a dict.
"""

from ._server import Server, ServerError, binary, create_local_server

__all__ = ["Server", "ServerError", "binary", "create_local_server"]
