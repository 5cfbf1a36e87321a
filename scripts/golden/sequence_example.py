"""Golden values for ParseSequenceExampleV2 (what tf.io.parse_sequence_example and
parse_single_sequence_example build): tf.train.SequenceExample protos serialized by
TensorFlow 2.21, parsed by its kernel, with context features (dense with and without
defaults, sparse, ragged) and feature lists (dense with padding and lengths, sparse, ragged
with both split types), a batch and a single example, missing lists assumed empty, empty
steps and an empty batch. Run as the header of common.py says, with <family> =
sequence_example."""
import numpy as np
import tensorflow as tf
from common import tensor, write

cases = []


def seq(context, lists):
    s = tf.train.SequenceExample()
    for k, v in context.items():
        f = s.context.feature[k]
        getattr(f, v[0] + "_list").value.extend(v[1])
    for k, steps in lists.items():
        fl = s.feature_lists.feature_list[k]
        for step in steps:
            f = fl.feature.add()
            if step is not None:
                getattr(f, step[0] + "_list").SetInParent()
                getattr(f, step[0] + "_list").value.extend(step[1])
    return s.SerializeToString()


def I(*v):
    return ("int64", list(v))


def F(*v):
    return ("float", [float(x) for x in v])


def B(*v):
    return ("bytes", [x.encode() for x in v])


DT = {"float": tf.float32, "int64": tf.int64, "string": tf.string, "int32": tf.int32}


def value_types(features):
    """The value types of `features` as the case format spells them ("float32" for float)."""
    return [d[1] if d[1] != "float" else "float32" for d in features]


def kind_attrs(kind, sparse, dense, ragged):
    """The type and shape attrs the context ("context") and the feature lists
    ("feature_list") both have, in the op's order."""
    return {
        kind + "_sparse_types": {"list_type": value_types(sparse)},
        kind + "_ragged_value_types": {"list_type": value_types(ragged)},
        kind + "_ragged_split_types": {"list_type": [d[2] for d in ragged]},
        kind + "_dense_shapes": {"list_shape": [list(d[2]) for d in dense]},
    }


def case(name, serialized, names=(), ctx_sparse=(), ctx_dense=(), ctx_ragged=(), fl_sparse=(), fl_dense=(),
         fl_ragged=()):
    """ctx_sparse/fl_sparse: [(key, type)]; ctx_dense: [(key, type, shape, default list)];
    ctx_ragged/fl_ragged: [(key, type, split type)]; fl_dense: [(key, type, shape, assumed empty)]."""
    keys = lambda v: np.array([x[0].encode() for x in v], dtype=object).reshape(len(v))
    defaults = [np.array(d[3], dtype={"float": np.float32, "int64": np.int64, "string": object}[d[1]])
                for d in ctx_dense]
    defaults = [d.reshape(c[2]) if d.size else d for d, c in zip(defaults, ctx_dense)]
    defaults = [d.astype(object) if d.dtype == object else d for d in defaults]
    inputs = [np.array(serialized, dtype=object), np.array(list(names), dtype=object).reshape(len(names)),
              keys(ctx_sparse), keys(ctx_dense), keys(ctx_ragged), keys(fl_sparse), keys(fl_dense), keys(fl_ragged),
              np.array([d[3] for d in fl_dense], dtype=bool).reshape(len(fl_dense))] + defaults
    attrs = {"Ncontext_sparse": {"i": len(ctx_sparse)}, "Tcontext_dense": {"list_type": value_types(ctx_dense)}}
    attrs.update(kind_attrs("context", ctx_sparse, ctx_dense, ctx_ragged))
    attrs.update({"Nfeature_list_sparse": {"i": len(fl_sparse)}, "Nfeature_list_dense": {"i": len(fl_dense)},
                  "feature_list_dense_types": {"list_type": value_types(fl_dense)}})
    attrs.update(kind_attrs("feature_list", fl_sparse, fl_dense, fl_ragged))
    out = tf.raw_ops.ParseSequenceExampleV2(
        serialized=tf.constant(inputs[0], tf.string), debug_name=tf.constant(inputs[1], tf.string),
        context_sparse_keys=tf.constant(inputs[2], tf.string), context_dense_keys=tf.constant(inputs[3], tf.string),
        context_ragged_keys=tf.constant(inputs[4], tf.string),
        feature_list_sparse_keys=tf.constant(inputs[5], tf.string),
        feature_list_dense_keys=tf.constant(inputs[6], tf.string),
        feature_list_ragged_keys=tf.constant(inputs[7], tf.string),
        feature_list_dense_missing_assumed_empty=tf.constant(inputs[8], tf.bool),
        context_dense_defaults=[tf.constant(d, DT[c[1]]) for d, c in zip(defaults, ctx_dense)],
        context_sparse_types=[DT[d[1]] for d in ctx_sparse], Ncontext_sparse=len(ctx_sparse),
        context_ragged_value_types=[DT[d[1]] for d in ctx_ragged],
        context_ragged_split_types=[DT[d[2]] for d in ctx_ragged],
        context_dense_shapes=[list(d[2]) for d in ctx_dense],
        feature_list_sparse_types=[DT[d[1]] for d in fl_sparse], Nfeature_list_sparse=len(fl_sparse),
        feature_list_dense_types=[DT[d[1]] for d in fl_dense], Nfeature_list_dense=len(fl_dense),
        feature_list_dense_shapes=[list(d[2]) for d in fl_dense],
        feature_list_ragged_value_types=[DT[d[1]] for d in fl_ragged],
        feature_list_ragged_split_types=[DT[d[2]] for d in fl_ragged])
    outs = [t.numpy() for field in out for t in field]
    # TensorFlow leaves a scalar input's ragged row splits (context) and outer splits
    # (feature lists) unset: no such cases.
    if np.asarray(serialized).ndim == 0 and (fl_ragged or ctx_ragged):
        raise ValueError("scalar inputs with ragged feature lists are not golden cases")
    cases.append({"name": name, "op": "ParseSequenceExampleV2", "attrs": attrs,
                  "inputs": [tensor(i) for i in inputs], "outputs": [tensor(o) for o in outs]})


a = seq({"len": I(3), "tags": B("x", "y"), "w": F(0.5, 1.5)},
        {"tok": [I(1, 2), I(3, 4), I(5, 6)], "score": [F(1), F(2, 3), F()], "words": [B("a"), B("b", "c")],
         "r": [I(1), I(2, 3)], "lab": [B("p"), B("q"), B("")]})
b = seq({"tags": B("z"), "w": F(2, -1)},
        {"tok": [I(7, 8)], "score": [F(4, 5, 6)], "words": [B("d")], "r": [I(), I(4), None], "lab": [B("s")]})
c = seq({"len": I(9)}, {"tok": [], "score": [None, None], "r": []})
batch = [a, b, c]
case("batch_all_kinds", batch, ctx_sparse=[("tags", "string")],
     ctx_dense=[("len", "int64", [], [0]), ("w", "float", [2], [0.0, 0.0])],
     fl_sparse=[("score", "float")], fl_dense=[("tok", "int64", [2], False)], fl_ragged=[("r", "int64", "int32")])
case("batch_ragged_context_int32", batch, ctx_ragged=[("tags", "string", "int32"), ("w", "float", "int64")],
     fl_ragged=[("r", "int64", "int64"), ("words", "string", "int32")])
case("batch_dense_strings_missing_assumed_empty", batch, names=["e0", "e1", "e2"],
     fl_dense=[("lab", "string", [], True), ("tok", "int64", [2], False)])
case("batch_sparse_lists", batch, ctx_sparse=[("w", "float"), ("nothing", "int64")],
     fl_sparse=[("tok", "int64"), ("words", "string"), ("r", "int64")])
case("dense_2x2_steps", [seq({}, {"m": [F(1, 2, 3, 4)]}), seq({}, {"m": [F(5, 6, 7, 8), F(9, 10, 11, 12)]})],
     fl_dense=[("m", "float", [2, 2], False)], ctx_dense=[("id", "int64", [2], [-1, -2])])
case("single_example", a, ctx_sparse=[("tags", "string")], ctx_dense=[("len", "int64", [], [])],
     fl_sparse=[("score", "float")], fl_dense=[("tok", "int64", [2], False), ("absent", "float", [], True)])
case("single_scalar_steps", seq({"w": F(1, 2), "v": I(3, 4, 5)}, {"x": [I(4), I(5), I(6)]}),
     ctx_dense=[("w", "float", [2], [])], fl_dense=[("x", "int64", [], False)], ctx_sparse=[("v", "int64")])
case("empty_batch", np.array([], dtype=object), ctx_sparse=[("tags", "string")],
     ctx_dense=[("len", "int64", [], [0])], fl_sparse=[("score", "float")], fl_dense=[("tok", "int64", [2], False)],
     fl_ragged=[("r", "int64", "int32")])
write("sequence_example", cases)
