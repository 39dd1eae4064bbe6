# `cpack -G DEB` in a build folder: gpupin_<version>_<arch>.deb. No
# dependency on NVIDIA packages: gpupin loads libnvidia-ml.so.1 at run time
# and says so when it is missing; the rest comes from dpkg-shlibdeps.
set(CPACK_PACKAGE_NAME gpupin)
set(CPACK_PACKAGE_VENDOR "gpupin")
set(CPACK_PACKAGE_CONTACT "gpupin maintainers <gpupin@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "put programs on the right NVIDIA GPU of a shared server, and prove it")
set(CPACK_PACKAGE_DESCRIPTION
    "gpupin chooses GPUs for a job by a policy, starts it on them, holds a lease\n\
so that other users' jobs do not take the same cards, and shows which\n\
physical GPU each cuda:N of a process is. One program, no daemon.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Debian ships programs without their debugging symbols.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, python3")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/postinst
                                       ${PROJECT_SOURCE_DIR}/packaging/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
