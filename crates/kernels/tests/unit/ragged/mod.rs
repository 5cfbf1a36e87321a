mod to_tensor;
