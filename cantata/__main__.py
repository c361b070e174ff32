from cantata.cli import main

main()
