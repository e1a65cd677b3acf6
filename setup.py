"""Build the optional compiled core (`kafkatool._speedups`).

Everything else is in pyproject.toml.  The extension is optional: on a machine without a C compiler
(or Python headers) the build warns and installs the pure-Python code, which `kafkatool.log.core`
then uses; `kafkatool --version` says which core is in use.

One extension module from one C unit per Python unit it accelerates (kafkatool/_core/, each unit's
opening comment names what it mirrors; module.c lists them); MANIFEST.in puts them in the sdist.
"""

from setuptools import Extension, setup

CORE_UNITS = [
    "module",
    "crc32c",
    "v2_walk",
    "default_records",
    "dumplog_lines",
    "offsets_log",
    "md5",
    "compact_scan",
    "compact_keys",
    "compact_offsetmap",
    "compact_cleaner",
    "heap",
]

setup(
    ext_modules=[
        Extension(
            "kafkatool._speedups",
            sources=[f"kafkatool/_core/{unit}.c" for unit in CORE_UNITS],
            depends=["kafkatool/_core/core.h"],
            extra_compile_args=["-O2", "-std=gnu11"],
            libraries=["m"],  # sin() for MD5's constants
            optional=True,
        )
    ]
)
