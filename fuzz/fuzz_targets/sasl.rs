#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tusk_fuzzing::sasl::run(data));
