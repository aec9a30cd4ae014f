"""mephisto_tasks"""
