//! Compiles ferroflow's TensorFlow-compatible .proto subset with protox (no protoc needed).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new("proto");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir.join("tensorflow"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "proto") {
            files.push(path.strip_prefix(dir)?.to_path_buf());
        }
    }
    files.sort();
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(&files, [dir])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .bytes(".tensorflow.TensorProto.tensor_content")
        // An `AttrValue` is as large as its largest variant: unboxed, a `TensorProto` made
        // every attr ~420 bytes and a node's attr map ~1.8 KB (issue #22, graph memory).
        .boxed(".tensorflow.AttrValue.value.tensor")
        .boxed(".tensorflow.AttrValue.value.list")
        .boxed(".tensorflow.AttrValue.value.func")
        .compile_fds(fds)?;
    Ok(())
}
