//! TensorFlow's TensorList ops (`DT_VARIANT` lists of tensors, as `tf.while_loop`
//! gradients and TensorFlow 2's `tf.TensorArray` use them) and `VariableShape`.

use ferroflow_core::Status;

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::shape_fn::{scalar, Dims, ShapeCtx};

fn unknown(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None])
}

fn list_and_unknown(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![]), None])
}

fn concat_shape(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None, Some(vec![-1])])
}

fn vector(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![-1])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    // A new list: empty (at most `max_num_elements`, -1 for no bound) or of unset elements.
    for (name, count) in [("EmptyTensorList", "max_num_elements: int32"), ("TensorListReserve", "num_elements: int32")]
    {
        r.add(
            op(name)
                .input("element_shape: shape_type")
                .input(count)
                .output("handle: variant")
                .attr("element_dtype: type")
                .attr("shape_type: {int32, int64}")
                .shape_fn(scalar)
                .build(),
        );
    }
    // A list made from a tensor's rows, or from its pieces of `lengths` rows.
    for (name, extra) in [("TensorListFromTensor", None), ("TensorListSplit", Some("lengths: int64"))] {
        let b = op(name).input("tensor: element_dtype").input("element_shape: shape_type");
        let b = extra.into_iter().fold(b, OpDefBuilder::input).output("output_handle: variant");
        r.add(b.attr("element_dtype: type").attr("shape_type: {int32, int64}").shape_fn(scalar).build());
    }
    r.add(
        op("TensorListPushBack")
            .input("input_handle: variant")
            .input("tensor: element_dtype")
            .output("output_handle: variant")
            .attr("element_dtype: type")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TensorListPopBack")
            .input("input_handle: variant")
            .input("element_shape: int32")
            .output("output_handle: variant")
            .output("tensor: element_dtype")
            .attr("element_dtype: type")
            .shape_fn(list_and_unknown)
            .build(),
    );
    r.add(
        op("TensorListSetItem")
            .input("input_handle: variant")
            .input("index: int32")
            .input("item: element_dtype")
            .output("output_handle: variant")
            .attr("element_dtype: type")
            .attr("resize_if_index_out_of_bounds: bool = false")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TensorListGetItem")
            .input("input_handle: variant")
            .input("index: int32")
            .input("element_shape: int32")
            .output("item: element_dtype")
            .attr("element_dtype: type")
            .shape_fn(unknown)
            .build(),
    );
    r.add(
        op("TensorListStack")
            .input("input_handle: variant")
            .input("element_shape: int32")
            .output("tensor: element_dtype")
            .attr("element_dtype: type")
            .attr("num_elements: int = -1")
            .shape_fn(unknown)
            .build(),
    );
    r.add(op("TensorListLength").input("input_handle: variant").output("length: int32").shape_fn(scalar).build());
    r.add(
        op("TensorListElementShape")
            .input("input_handle: variant")
            .output("element_shape: shape_type")
            .attr("shape_type: {int32, int64}")
            .shape_fn(unknown)
            .build(),
    );
    r.add(
        op("TensorListGather")
            .input("input_handle: variant")
            .input("indices: int32")
            .input("element_shape: int32")
            .output("values: element_dtype")
            .attr("element_dtype: type")
            .shape_fn(unknown)
            .build(),
    );
    r.add(
        op("TensorListScatterIntoExistingList")
            .input("input_handle: variant")
            .input("tensor: element_dtype")
            .input("indices: int32")
            .output("output_handle: variant")
            .attr("element_dtype: type")
            .shape_fn(scalar)
            .build(),
    );
    r.add(
        op("TensorListConcatV2")
            .input("input_handle: variant")
            .input("element_shape: shape_type")
            .input("leading_dims: int64")
            .output("tensor: element_dtype")
            .output("lengths: int64")
            .attr("element_dtype: type")
            .attr("shape_type: {int32, int64}")
            .shape_fn(concat_shape)
            .build(),
    );
    r.add(
        op("VariableShape")
            .input("input: resource")
            .output("output: out_type")
            .attr("out_type: {int32, int64} = DT_INT32")
            .shape_fn(vector)
            .stateful()
            .build(),
    );
}
