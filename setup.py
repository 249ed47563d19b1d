"""Builds the C measurement core with the system's cc and ships it inside the package."""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BINARIES = ("osmeter-core", "osmeter-core-static", "osmeter-helper-dynamic",
            "osmeter-helper-static")


class BuildCore(build_py):
    def run(self):
        super().run()
        build_dir = os.path.join(os.path.abspath(self.build_lib), "osmeter", "_corebuild")
        make = shutil.which("gmake") or shutil.which("make")
        if not make:
            raise SystemExit("osmeter needs make and a C compiler to build its core "
                             "(Debian: apt-get install build-essential)")
        subprocess.check_call([make, "-C", os.path.join(HERE, "core"), "BUILD=" + build_dir])
        bin_dir = os.path.join(self.build_lib, "osmeter", "bin")
        os.makedirs(bin_dir, exist_ok=True)
        for name in BINARIES:
            src = os.path.join(build_dir, name)
            if os.path.exists(src):  # the static ones may be missing (macOS)
                shutil.copy2(src, os.path.join(bin_dir, name))
        shutil.rmtree(build_dir)


class BinaryDistribution(Distribution):
    """The wheel holds native executables: mark it platform-specific."""
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildCore}, distclass=BinaryDistribution)
