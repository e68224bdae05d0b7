from ragtui.cli import main

main()
