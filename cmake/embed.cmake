# kreg_embed(<output.cpp> <function> <bases> <file>...)
# Generates a C++ file defining `std::span<const EmbeddedFile> <function>()` that holds
# each file's name (relative to the first of the `bases` folders, a list, that holds it) and
# text. The text is written as a byte
# array so that no file content can terminate a literal early. The generated file is
# rebuilt whenever an embedded file changes.
function(kreg_embed output function bases)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DFUNCTION=${function} "-DBASES=${bases}"
            "-DFILES=${files}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${function}"
    VERBATIM)
endfunction()
