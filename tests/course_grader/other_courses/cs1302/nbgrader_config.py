c = get_config()
c.CourseDirectory.course_id = 'cs1302'
c.CourseDirectory.root = '/home/course/cs1302/nbgrader'
c.CourseDirectory.ignore = ['*.md', '_*', '.ipynb_checkpoints', '*.pyc', '__pycache__', 'feedback', 'media', 'old', 'private']
