mod adagrad_da;
mod proximal;
mod testutil;
