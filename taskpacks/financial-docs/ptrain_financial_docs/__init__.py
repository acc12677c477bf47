"""The financial-docs taskpack: analysts' questions answered from a collection of annual reports."""

from ptrain_financial_docs.taskpack import FinancialDocs

TASKPACK = FinancialDocs()

__all__ = ["TASKPACK", "FinancialDocs"]
