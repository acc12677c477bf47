import sys

from salesreport.report import run

run(sys.argv[1], sys.argv[2])
