# What `cmake --install` and the Debian package put where. The simulated
# server lives in lib/gpupin/, where gpupin looks beside ../lib/gpupin of
# its own executable (cli/world.cc, FindCompanionFile).
include(GNUInstallDirs)

install(TARGETS gpupin RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS gpupin_sim_nvml gpupin_sim_nvml_r470 gpupin_sim_nvml_legacy gpupin_sim_cuda
                gpupin_sim_workload
        RUNTIME DESTINATION lib/gpupin
        LIBRARY DESTINATION lib/gpupin)
# The simulated servers, and the worked examples in their folders (scripts
# keep their modes).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpupin/examples
        USE_SOURCE_PERMISSIONS)
# The Python module (python/gpupin.py, standard library only), where
# Debian's python3 finds it under the /usr prefix.
set(GPUPIN_PYTHON_DIR lib/python3/dist-packages CACHE STRING
    "where gpupin.py is installed, relative to the prefix")
install(FILES ${PROJECT_SOURCE_DIR}/python/gpupin.py DESTINATION ${GPUPIN_PYTHON_DIR})
install(FILES ${GPUPIN_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
file(GLOB gpupin_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/doc/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${gpupin_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR})
# systemd-tmpfiles reads /usr/lib/tmpfiles.d whatever the prefix's libdir.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/tmpfiles.conf DESTINATION lib/tmpfiles.d
        RENAME gpupin.conf)

# Shell completions, written by the gpupin just built from its own command
# table (`gpupin completion SHELL`), where each shell looks for a package's.
set(gpupin_completions ${CMAKE_BINARY_DIR}/completions)
foreach(shell bash zsh fish)
  add_custom_command(
    OUTPUT ${gpupin_completions}/gpupin.${shell}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${gpupin_completions}
    COMMAND sh -c "'$<TARGET_FILE:gpupin>' completion ${shell} >'${gpupin_completions}/gpupin.${shell}'"
    DEPENDS gpupin
    COMMENT "Writing the ${shell} completion"
    VERBATIM)
  list(APPEND gpupin_completion_files ${gpupin_completions}/gpupin.${shell})
endforeach()
add_custom_target(gpupin_completions ALL DEPENDS ${gpupin_completion_files})
install(FILES ${gpupin_completions}/gpupin.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME gpupin)
install(FILES ${gpupin_completions}/gpupin.zsh DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions
        RENAME _gpupin)
install(FILES ${gpupin_completions}/gpupin.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d
        RENAME gpupin.fish)
