"""The selection the fast kernels share (:mod:`.selection`: ORT's own TopK, called from inside
an op). Each op's kernel lives in its folder, ``ortops/ops/<op>/kernel.py``, and property
tests hold it against the op's reference.
"""
