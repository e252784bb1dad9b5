"""The run: its plan of cells, each cell's record and verdict, the results file, the engines it grades."""
