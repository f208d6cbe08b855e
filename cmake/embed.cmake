# kreg_embed(<output.cpp> <function> <file>...)
# Generates a C++ file defining `std::span<const EmbeddedFile> <function>()` that holds
# each file's name (relative to its base folder) and text. The text is written as a byte
# array so that no file content can terminate a literal early. The generated file is
# rebuilt whenever an embedded file changes.
function(kreg_embed output function base)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DFUNCTION=${function} -DBASE=${base}
            "-DFILES=${files}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${function}"
    VERBATIM)
endfunction()
