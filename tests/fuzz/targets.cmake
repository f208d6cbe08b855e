# The fuzz targets: tests/fuzz/<name>_fuzz.cpp builds kreg_fuzz_<name>, and its seed corpus
# is tests/fuzz/corpus/<name>/.
set(KREG_FUZZ_TARGETS cache_entry constants manifest codegen)
