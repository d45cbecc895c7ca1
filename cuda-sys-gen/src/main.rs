fn main() { eprintln!("todo"); }
