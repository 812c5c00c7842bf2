"""A program compiled in another process joins a device's build cache by its source."""

from __future__ import annotations

from gpautotune.problems.opencl import BuildCache, DeviceSession

SOURCE = "__kernel void twice(__global float *x) { x[get_global_id(0)] *= 2.0f; }"


def test_a_program_built_from_a_binary_is_the_build_of_its_source(cl_device):
    import pyopencl as cl

    elsewhere = DeviceSession(cl_device)  # another context, as another process would have
    compiled = elsewhere.builds.build(SOURCE)
    binary = compiled.program.get_info(cl.program_info.BINARIES)[0]
    here = DeviceSession(cl_device)
    program = cl.Program(here.context, [here.device], [binary])
    program.build()
    here.builds.add(SOURCE, "", program, 0.25)
    built = here.builds.build(SOURCE)
    assert built.program is program and built.cached and built.build_time_s == 0.25
    assert not here.builds.build(SOURCE + " ").cached  # another source compiles anew


def test_added_programs_count_against_the_capacity(cl_device):
    session = DeviceSession(cl_device)
    builds = BuildCache(session.context, session.device, capacity=2)
    for i in range(3):
        builds.add(f"{SOURCE} // {i}", "", object(), 0.0)
    assert len(builds) == 2
