mod accumulator;
mod lookup_table;
mod optional;
mod queue;
mod sparse_accumulator;
mod tensor_array;
mod tensor_list;
