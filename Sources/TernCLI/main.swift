import TernBench
import TernCommands
import TernFleet

TernCommandLine.main(commands: [FleetCommand.self, BenchCommand.self])
