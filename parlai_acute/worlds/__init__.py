"""worlds"""
