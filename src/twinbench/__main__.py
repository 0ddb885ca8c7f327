from twinbench.cli import main

main()
