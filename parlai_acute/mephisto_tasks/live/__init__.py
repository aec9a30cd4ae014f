"""Mephisto plumbing every live task shares (launch, setup, database, the live runner, item tasks,
sessions, the page frame and its router client in ``frontend/``), kept apart from the task folders
so that a protocol's own live code is only its folder beside this one."""
