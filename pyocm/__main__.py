from pyocm.cli.app import main

main()
