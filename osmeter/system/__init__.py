"""What this machine is: the system description recorded with every run (sysinfo.py) and
the file system a directory is on (fsinfo.py)."""
