"""Fakes of the ports and the helpers tests share, one module per thing faked or driven. Test modules import
from here, never from one another."""
