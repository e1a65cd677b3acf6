"""Build the optional compiled core (`kafkatool._speedups`, issue 14).

Everything else is in pyproject.toml.  The extension is optional: on a machine without a C compiler
(or Python headers) the build warns and installs the pure-Python code, which `kafkatool.log.core`
then uses; `kafkatool --version` says which core is in use.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kafkatool._speedups",
            sources=["kafkatool/_speedups.c"],
            extra_compile_args=["-O2", "-std=gnu11"],
            libraries=["m"],  # sin() for MD5's constants
            optional=True,
        )
    ]
)
