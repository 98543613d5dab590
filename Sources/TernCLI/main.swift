import TernCommands

TernCommandLine.main()
