from kafkatool.cli.main import run

run()
