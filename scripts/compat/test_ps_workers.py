"""One ferroflow ps and two ferroflow workers, driven by TensorFlow's client: constants on
/job:ps/task:0; worker 0 computes 3*4 = 12 and worker 1 computes 5*8 = 40."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffcluster  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.compat.v1.disable_eager_execution()

servers, flag = ffcluster.cluster({"ps": 1, "worker": 2})
try:
    for task, (a, b, want) in enumerate([(3.0, 4.0, 12.0), (5.0, 8.0, 40.0)]):
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                x = tf.constant(a)
            with tf.device(f"/job:worker/task:{task}"):
                y = tf.constant(b)
                z = x * y
            with tf.compat.v1.Session(servers["worker"][task].target) as sess:
                got = sess.run(z)
                print(f"worker {task}: {got}")
                assert got == want, (got, want)
                names = sorted(d.name for d in sess.list_devices())
                assert len(names) == 3, names
    print("test_ps_workers: OK")
finally:
    for ss in servers.values():
        for s in ss:
            s.kill()
