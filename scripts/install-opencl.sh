#!/usr/bin/env bash
# Make sure a working CPU OpenCL driver exists.
# The PoCL wheel (pocl-binary-distribution 3.0, LLVM 14) cannot compile kernels on CPUs
# newer than its LLVM ("unknown target CPU 'generic'"), so we also install Debian's PoCL
# (pocl-opencl-icd, LLVM 15, registered in /etc/OpenCL/vendors) when we can.
set -u
if ls /etc/OpenCL/vendors/pocl*.icd >/dev/null 2>&1; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing Debian's PoCL (pocl-opencl-icd) for a CPU OpenCL device"
  (apt-get install -y -qq pocl-opencl-icd >/dev/null 2>&1 || \
   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq pocl-opencl-icd >/dev/null 2>&1)) || \
   echo "warning: could not install pocl-opencl-icd; install a CPU OpenCL driver by hand" >&2
else
  echo "note: no system PoCL; if kernels fail to build, install one (e.g. 'apt-get install pocl-opencl-icd')" >&2
fi
exit 0
